import type { TopK } from './top-k.ts';
import { ANALOG_DIMS as D } from './vector.ts';

/**
 * A k-d tree over standardised analog vectors, as plain typed arrays (checkpointable and
 * transferable). Points are stored contiguously in tree order, so a leaf is one run of
 * memory. Each node keeps the tight bounding box of its points and their earliest
 * resolution time: a search skips a subtree whose box is farther than the current k-th
 * neighbour, or whose candidates all resolved after the query time.
 *
 * Exactness: a box's lower bound is computed with the same float64 operations, in the same
 * component order, as a point's distance, and floating-point rounding is monotone, so the
 * bound never exceeds the distance of any point inside. Subtrees are skipped only when
 * strictly farther, so equal-distance candidates still reach the snapshotId tie-break.
 */

const LEAF_SIZE = 32;

export interface KdTree {
  size: number;
  /** Tree position → candidate index. */
  order: Int32Array;
  /** Standardised vectors in tree order, D per point. */
  points: Float32Array;
  resolvedAt: Float64Array;
  token: Int32Array;
  ts: Float64Array;
  nodeStart: Int32Array;
  nodeEnd: Int32Array;
  /** Children; -1 in a leaf. */
  nodeLeft: Int32Array;
  nodeRight: Int32Array;
  /** Per node: D lows then D highs. */
  nodeBox: Float32Array;
  nodeMinResolved: Float64Array;
}

/** Which candidates a query may use: resolved at or before `t`, and not `token` within ±`windowMs` of `t`. */
export interface CandidateFilter {
  t: number;
  token: number;
  windowMs: number;
}

/** Builds the tree over candidates 0..count-1, whose standardised vectors are `z` (candidate order). */
export function buildKdTree(z: Float32Array, resolvedAt: Float64Array, token: Int32Array, ts: Float64Array, count: number): KdTree {
  // Rows are partitioned in place in a copy, so every level reads memory sequentially; at
  // the end it holds the points in tree order.
  const points = z.slice(0, count * D);
  const perm = new Int32Array(count);
  for (let i = 0; i < count; i++) perm[i] = i;
  const start: number[] = [];
  const end: number[] = [];
  const left: number[] = [];
  const right: number[] = [];
  const box: number[] = [];
  const minResolved: number[] = [];
  const lo = new Float64Array(D);
  const hi = new Float64Array(D);

  const build = (from: number, to: number): number => {
    const node = start.length;
    lo.fill(Infinity);
    hi.fill(-Infinity);
    for (let i = from; i < to; i++) {
      const o = i * D;
      for (let d = 0; d < D; d++) {
        const v = points[o + d];
        if (v < lo[d]) lo[d] = v;
        if (v > hi[d]) hi[d] = v;
      }
    }
    start.push(from);
    end.push(to);
    left.push(-1);
    right.push(-1);
    for (let d = 0; d < D; d++) box.push(lo[d]);
    for (let d = 0; d < D; d++) box.push(hi[d]);
    let dim = 0;
    for (let d = 1; d < D; d++) if (hi[d] - lo[d] > hi[dim] - lo[dim]) dim = d;
    // A leaf when small, or when all points coincide (no split would separate them).
    if (to - from <= LEAF_SIZE || !(hi[dim] > lo[dim])) {
      let minRes = Infinity;
      for (let i = from; i < to; i++) minRes = Math.min(minRes, resolvedAt[perm[i]]);
      minResolved.push(minRes);
      return node;
    }
    minResolved.push(Infinity); // the children's minimum, once they are built
    const mid = (from + to) >> 1;
    select(points, perm, from, to - 1, mid, dim);
    const l = build(from, mid);
    const r = build(mid, to);
    left[node] = l;
    right[node] = r;
    minResolved[node] = Math.min(minResolved[l], minResolved[r]);
    return node;
  };
  if (count > 0) build(0, count);

  const treeResolved = new Float64Array(count);
  const treeToken = new Int32Array(count);
  const treeTs = new Float64Array(count);
  for (let p = 0; p < count; p++) {
    const c = perm[p];
    treeResolved[p] = resolvedAt[c];
    treeToken[p] = token[c];
    treeTs[p] = ts[c];
  }
  return {
    size: count,
    order: perm,
    points,
    resolvedAt: treeResolved,
    token: treeToken,
    ts: treeTs,
    nodeStart: Int32Array.from(start),
    nodeEnd: Int32Array.from(end),
    nodeLeft: Int32Array.from(left),
    nodeRight: Int32Array.from(right),
    nodeBox: Float32Array.from(box),
    nodeMinResolved: Float64Array.from(minResolved),
  };
}

/**
 * Reorders rows lo..hi of `points` (and `perm` with them) so that row k holds the point of
 * rank k on `dim`, smaller ones before it and larger ones after (Hoare quickselect, median-of-three).
 */
function select(points: Float32Array, perm: Int32Array, lo: number, hi: number, k: number, dim: number): void {
  while (hi > lo) {
    const a = points[lo * D + dim];
    const b = points[((lo + hi) >> 1) * D + dim];
    const c = points[hi * D + dim];
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (points[i * D + dim] < pivot) i++;
      while (points[j * D + dim] > pivot) j--;
      if (i <= j) {
        swapRows(points, perm, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

function swapRows(points: Float32Array, perm: Int32Array, i: number, j: number): void {
  const oi = i * D;
  const oj = j * D;
  for (let d = 0; d < D; d++) {
    const t = points[oi + d];
    points[oi + d] = points[oj + d];
    points[oj + d] = t;
  }
  const t = perm[i];
  perm[i] = perm[j];
  perm[j] = t;
}

/** Squared distance from q to a node's box (0 inside); see the exactness note above. */
function boxBound(box: Float32Array, node: number, q: Float64Array): number {
  const o = node * 2 * D;
  let s = 0;
  for (let d = 0; d < D; d++) {
    const v = q[d];
    const l = box[o + d];
    if (v < l) {
      const e = l - v;
      s += e * e;
    } else {
      const h = box[o + D + d];
      if (v > h) {
        const e = v - h;
        s += e * e;
      }
    }
  }
  return s;
}

/** Offers every eligible point of the tree that could be among the k nearest of q to `top`. */
export function searchKdTree(tree: KdTree, q: Float64Array, filter: CandidateFilter, top: TopK): void {
  if (tree.size === 0) return;
  const { points, resolvedAt, token, ts, order, nodeStart, nodeEnd, nodeLeft, nodeRight, nodeBox, nodeMinResolved } = tree;
  const { t, windowMs } = filter;
  const qToken = filter.token;
  const q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3], q4 = q[4], q5 = q[5], q6 = q[6];
  // Depth is about log2(size / LEAF_SIZE); a stack of 2 per level holds any search.
  const stackNode = new Int32Array(256);
  const stackBound = new Float64Array(256);
  let sp = 0;
  stackNode[sp] = 0;
  stackBound[sp++] = 0;
  while (sp > 0) {
    const node = stackNode[--sp];
    if (stackBound[sp] > top.bound || nodeMinResolved[node] > t) continue;
    const l = nodeLeft[node];
    if (l >= 0) {
      const r = nodeRight[node];
      const bl = boxBound(nodeBox, l, q);
      const br = boxBound(nodeBox, r, q);
      // Nearer child on top of the stack, searched first, so the bound tightens early.
      const bound = top.bound;
      const nearLeft = bl <= br;
      const bFar = nearLeft ? br : bl;
      const bNear = nearLeft ? bl : br;
      if (bFar <= bound) {
        stackNode[sp] = nearLeft ? r : l;
        stackBound[sp++] = bFar;
      }
      if (bNear <= bound) {
        stackNode[sp] = nearLeft ? l : r;
        stackBound[sp++] = bNear;
      }
      continue;
    }
    for (let p = nodeStart[node], e = nodeEnd[node]; p < e; p++) {
      if (resolvedAt[p] > t) continue;
      if (token[p] === qToken && Math.abs(ts[p] - t) <= windowMs) continue;
      const o = p * D;
      const bound = top.bound;
      let x = points[o] - q0;
      let s = x * x;
      x = points[o + 1] - q1;
      s += x * x;
      x = points[o + 2] - q2;
      s += x * x;
      x = points[o + 3] - q3;
      s += x * x;
      if (s > bound) continue; // partial sums only grow
      x = points[o + 4] - q4;
      s += x * x;
      x = points[o + 5] - q5;
      s += x * x;
      x = points[o + 6] - q6;
      s += x * x;
      if (s <= bound) top.offer(s, order[p]);
    }
  }
}

/** The same eligibility and distance as the tree, over points [0, count) of an unindexed block. */
export function scanBlock(
  points: Float32Array,
  count: number,
  firstCandidate: number,
  resolvedAt: Float64Array,
  token: Int32Array,
  ts: Float64Array,
  q: Float64Array,
  filter: CandidateFilter,
  top: TopK,
): void {
  for (let p = 0; p < count; p++) {
    const c = firstCandidate + p;
    if (resolvedAt[c] > filter.t) continue;
    if (token[c] === filter.token && Math.abs(ts[c] - filter.t) <= filter.windowMs) continue;
    const o = p * D;
    let s = 0;
    for (let d = 0; d < D; d++) {
      const x = points[o + d] - q[d];
      s += x * x;
    }
    if (s <= top.bound) top.offer(s, c);
  }
}
