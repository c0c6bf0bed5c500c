/**
 * Objects kept for the life of the process so that V8 keeps their shapes (decision 0080).
 *
 * V8 reaches the shape ("map") of a class instance with fields through transitions from the class's initial
 * shape, and transitions are weak: when no instance of a class is alive at a full collection, its shapes are
 * collected, and every optimised function that checks for them is thrown away ("marking dependent code ... weak
 * objects"). The turn loop's per-response objects (timeline, collectors, folds, abort plumbing) all die between
 * runs, so a major collection while the worker is idle used to deoptimise some 50 functions of the loop, and the
 * next few hundred runs ran unoptimised code again. One empty instance per such class, made when its module
 * loads, keeps those shapes alive; it holds no data of any run.
 */
const anchored: Array<object> = []

export const anchorShapes = (...instances: ReadonlyArray<object>): void => {
  for (const instance of instances) anchored.push(instance)
}
