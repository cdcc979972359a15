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
    a.push(item)
    let i = a.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!less(a[i]!, a[p]!)) break
      ;[a[i], a[p]] = [a[p]!, a[i]!]
      i = p
    }
  }

  pop(): T | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length && last) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && less(a[l]!, a[m]!)) m = l
        if (r < a.length && less(a[r]!, a[m]!)) m = r
        if (m === i) break
        ;[a[i], a[m]] = [a[m]!, a[i]!]
        i = m
      }
    }
    return top
  }
}

function less(x: Timed, y: Timed): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq)
}
