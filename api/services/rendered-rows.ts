import { header } from '../../presenters/resource.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { renderWire, WireJson } from '../http/wire.ts';
import type { TokenDirectory } from './token-directory.ts';

/** The list envelope's first members (spec 2.1), rendered: a listing adds `data` and the rest with withMembers. */
export const LIST_HEADER = renderWire(header('list'));

const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((s) => Buffer.from(s));

export interface RenderedRowsOptions<T extends object> {
  /** The row as the response presents it, with its token object from `tokens`. */
  present: (row: T, tokens: ReadonlyMap<string, TokenRow>) => object;
  tokenIdOf: (row: T) => string;
  directory: TokenDirectory;
}

/**
 * A listing's rows rendered to their wire JSON once, for as long as the row and its token's
 * metadata are the same objects (the read models held in memory give the same object for the
 * same row; the token directory, for the same metadata). Listings of every filter, sort and
 * limit share the rows they hold, and presenting and renaming rows was most of their work.
 */
export class RenderedRows<T extends object> {
  private readonly options: RenderedRowsOptions<T>;
  private readonly rendered = new WeakMap<T, { token: TokenRow | undefined; json: Buffer }>();

  constructor(options: RenderedRowsOptions<T>) {
    this.options = options;
  }

  /** The rows as one JSON array in bytes, ready to go into a response as it is. */
  async render(rows: readonly T[]): Promise<WireJson> {
    const { present, tokenIdOf, directory } = this.options;
    const tokens = await directory.rows(rows.map(tokenIdOf));
    const parts: Buffer[] = [OPEN];
    rows.forEach((row, i) => {
      const token = tokens.get(tokenIdOf(row));
      let cached = this.rendered.get(row);
      if (cached === undefined || cached.token !== token) {
        cached = { token, json: Buffer.from(renderWire(present(row, tokens))) };
        this.rendered.set(row, cached);
      }
      if (i > 0) parts.push(COMMA);
      parts.push(cached.json);
    });
    parts.push(CLOSE);
    return new WireJson(Buffer.concat(parts));
  }
}
