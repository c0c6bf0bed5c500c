// The watcher moved down to the tool layer (Effect-written tools share it too); kept here for existing importers.
export { whenAborted } from "../tool/abort-watch.ts"
