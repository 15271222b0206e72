/**
 * The k best candidates seen so far under the total order (squared distance, snapshotId):
 * a max-heap whose root is the current worst. Ids are compared only on exactly equal
 * distances, so the answer does not depend on the order candidates are visited in.
 */
export class TopK {
  readonly k: number;
  size = 0;
  private readonly dist: Float64Array;
  private readonly cand: Int32Array;

  constructor(
    k: number,
    private readonly ids: readonly string[],
  ) {
    this.k = k;
    this.dist = new Float64Array(k);
    this.cand = new Int32Array(k);
  }

  /** Squared distance a candidate must not exceed to be considered: +∞ until k are held. */
  get bound(): number {
    return this.size < this.k ? Infinity : this.dist[0];
  }

  /** Offers candidate `c` at squared distance `d` (callers have checked d ≤ bound). */
  offer(d: number, c: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(d, c, this.dist[parent], this.cand[parent])) break;
        this.dist[i] = this.dist[parent];
        this.cand[i] = this.cand[parent];
        i = parent;
      }
      this.dist[i] = d;
      this.cand[i] = c;
      return;
    }
    if (!this.worse(this.dist[0], this.cand[0], d, c)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const child = r < this.size && this.worse(this.dist[r], this.cand[r], this.dist[l], this.cand[l]) ? r : l;
      if (!this.worse(this.dist[child], this.cand[child], d, c)) break;
      this.dist[i] = this.dist[child];
      this.cand[i] = this.cand[child];
      i = child;
    }
    this.dist[i] = d;
    this.cand[i] = c;
  }

  /** Held candidates, nearest first: [candidate index, squared distance] pairs. */
  sorted(): { candidate: number; d2: number }[] {
    const out: { candidate: number; d2: number }[] = [];
    for (let i = 0; i < this.size; i++) out.push({ candidate: this.cand[i], d2: this.dist[i] });
    return out.sort((a, b) => (a.d2 !== b.d2 ? a.d2 - b.d2 : compareIds(this.ids[a.candidate], this.ids[b.candidate])));
  }

  /** Is (da, ca) after (db, cb) in the total order? */
  private worse(da: number, ca: number, db: number, cb: number): boolean {
    return da > db || (da === db && compareIds(this.ids[ca], this.ids[cb]) > 0);
  }
}

/** Code-unit order, the same in every locale. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
