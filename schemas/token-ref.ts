import { CHAINS, type Chain } from './records.ts';

/**
 * Token references as the spec allows them in paths, queries and posts:
 * `$SYMBOL`, `SYMBOL`, `tk_<id>`, `<chain>:<address>` or a bare `<address>`.
 * Parsing normalises what is case-insensitive (symbols upper-cased, EVM hex addresses
 * lower-cased, chains lower-cased) so lookups can compare strings directly; Solana's
 * base58 addresses are case-sensitive and kept as written.
 */

export type AddressFamily = 'evm' | 'solana';

export type TokenRef =
  | { kind: 'symbol'; symbol: string; dollar: boolean }
  | { kind: 'id'; id: string }
  | { kind: 'chain_address'; chain: Chain; address: string; family: AddressFamily }
  | { kind: 'address'; address: string; family: AddressFamily };

export type TokenRefResult = { ok: true; ref: TokenRef } | { ok: false; error: string };

const SYMBOL = /^[A-Za-z0-9]{1,20}$/;
const TOKEN_ID = /^tk_[A-Za-z0-9]+$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** Every chain but Solana runs the EVM (arc and robinhood included) and uses 0x + 40 hex addresses. */
export function addressFamily(chain: Chain): AddressFamily {
  return chain === 'solana' ? 'solana' : 'evm';
}

/** The address in canonical form if it is well-formed for the family, else null. */
export function normaliseAddress(address: string, family: AddressFamily): string | null {
  if (family === 'evm') return EVM_ADDRESS.test(address) ? address.toLowerCase() : null;
  return BASE58_ADDRESS.test(address) ? address : null;
}

export function parseTokenRef(input: string): TokenRefResult {
  const s = input.trim();
  if (s.length === 0) return fail('empty token reference');
  if (s.length > 128) return fail('token reference longer than 128 characters');

  if (s.startsWith('$')) {
    const symbol = s.slice(1);
    return SYMBOL.test(symbol)
      ? ok({ kind: 'symbol', symbol: symbol.toUpperCase(), dollar: true })
      : fail(`"${s}" is not a $SYMBOL (1-20 letters or digits after $)`);
  }
  if (/^tk_/i.test(s)) {
    return TOKEN_ID.test(s) ? ok({ kind: 'id', id: s }) : fail(`"${s}" is not a token id of the form tk_<letters or digits>`);
  }
  const colon = s.indexOf(':');
  if (colon >= 0) {
    const chainText = s.slice(0, colon).toLowerCase();
    const address = s.slice(colon + 1);
    const chain = CHAINS.find((c) => c === chainText);
    if (!chain) return fail(`unknown chain "${s.slice(0, colon)}" (expected one of ${CHAINS.join(', ')})`);
    const family = addressFamily(chain);
    const normalised = normaliseAddress(address, family);
    if (normalised === null) {
      return fail(
        family === 'evm'
          ? `"${address}" is not a ${chain} address (0x followed by 40 hex digits)`
          : `"${address}" is not a solana address (32-44 base58 characters)`,
      );
    }
    return ok({ kind: 'chain_address', chain, address: normalised, family });
  }
  const evm = normaliseAddress(s, 'evm');
  if (evm !== null) return ok({ kind: 'address', address: evm, family: 'evm' });
  // A symbol has at most 20 characters, so 32+ base58 characters can only be an address.
  const solana = normaliseAddress(s, 'solana');
  if (solana !== null) return ok({ kind: 'address', address: solana, family: 'solana' });
  if (SYMBOL.test(s)) return ok({ kind: 'symbol', symbol: s.toUpperCase(), dollar: false });
  return fail(`"${s}" is not a token reference ($SYMBOL, SYMBOL, tk_<id>, <chain>:<address> or <address>)`);
}

function ok(ref: TokenRef): TokenRefResult {
  return { ok: true, ref };
}

function fail(error: string): TokenRefResult {
  return { ok: false, error };
}
