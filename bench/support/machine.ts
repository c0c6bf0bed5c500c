import os from "node:os"

/** One line naming what the numbers were measured on; ratios only compare within one such line. */
export const machineLine = (): string => {
  const cpus = os.cpus()
  const model = cpus[0]?.model.trim() ?? "unknown CPU"
  return `${model}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`
}
