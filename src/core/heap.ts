/** A binary min-heap of timed entries (the sandbox's event queue). */
export interface Timed {
  at: number
  seq: number
}

export class MinHeap<T extends Timed> {
  private items: T[] = []

  get size(): number {
    return this.items.length
  }

  peek(): T | undefined {
    return this.items[0]
  }

  clear(): void {
    this.items = []
  }

  push(item: T): void {
    const a = this.items
    // Sift up with a hole: move parents down until the item's place is found.
    let i = a.length
    a.push(item)
    while (i > 0) {
      const p = (i - 1) >> 1
      const parent = a[p]!
      if (!less(item, parent)) break
      a[i] = parent
      i = p
    }
    a[i] = item
  }

  pop(): T | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length && last) this.sink(last)
    return top
  }

  /** Puts the top entry (changed to a later time) where it now belongs: a pop and a push in one. */
  retop(): void {
    if (this.items.length) this.sink(this.items[0]!)
  }

  /** Places `item` from the root down (with a hole: children move up until its place is found). */
  private sink(item: T): void {
    const a = this.items
    const n = a.length
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      const c = r < n && less(a[r]!, a[l]!) ? r : l
      const child = a[c]!
      if (!less(child, item)) break
      a[i] = child
      i = c
    }
    a[i] = item
  }
}

function less(x: Timed, y: Timed): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq)
}
