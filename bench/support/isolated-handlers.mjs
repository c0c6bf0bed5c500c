// Handlers for bench/isolation.ts, loaded inside worker threads (plain JavaScript: threads have no TS loader).
export const forecast = ({ city, days }) => ({ city, days: days ?? 1, forecast: "sunny", highC: 24 })
