/**
 * Writing a key taken from untrusted data into an object. Plain assignment `out[key] = value` with the key
 * `__proto__` does not create a property: it replaces the object's prototype (or, for a primitive value, does
 * nothing), so a model's `{"__proto__": …}` would vanish from the data or change what every other key reads as.
 * `Object.fromEntries`, spreads and `JSON.parse` create own properties and are safe; assignment is not.
 */

/** Sets `key` as an own enumerable data property of `target`, `__proto__` included. */
export const setOwn = <V>(target: Record<string, V>, key: string, value: V): void => {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/** `record[key]` when `key` is the record's own property: never a value inherited from `Object.prototype`. */
export const ownValue = <V>(record: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined
