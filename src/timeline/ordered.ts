import type { BlockPosition } from "./block-scope.ts"

/**
 * Inserts a per-block result so the list stays in block start order. Blocks usually stop in the order they
 * started, so this is an append; parallel blocks stopping out of order walk back only past the later ones.
 */
export const insertByOrdinal = <A extends BlockPosition>(list: A[], item: A): void => {
  let at = list.length
  while (at > 0 && list[at - 1]!.ordinal > item.ordinal) at--
  if (at === list.length) list.push(item)
  else list.splice(at, 0, item)
}
