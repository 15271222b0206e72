import { describe, expect, it } from 'vitest';
import { parseTokenRef, type TokenRef } from '../../schemas/token-ref.ts';

const EVM = '0x65e26f382862bbafffe3c33384e0dc8adf63ea9b';
const SOL = 'MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump';

function ref(s: string): TokenRef {
  const parsed = parseTokenRef(s);
  if (!parsed.ok) throw new Error(`expected ${s} to parse: ${parsed.error}`);
  return parsed.ref;
}

function error(s: string): string {
  const parsed = parseTokenRef(s);
  if (parsed.ok) throw new Error(`expected ${s} to be refused, got ${JSON.stringify(parsed.ref)}`);
  return parsed.error;
}

describe('parseTokenRef', () => {
  it('reads $SYMBOL and bare SYMBOL as symbols, upper-cased', () => {
    expect(ref('$pepe')).toEqual({ kind: 'symbol', symbol: 'PEPE', dollar: true });
    expect(ref('WIF')).toEqual({ kind: 'symbol', symbol: 'WIF', dollar: false });
    expect(ref('AI16Z')).toEqual({ kind: 'symbol', symbol: 'AI16Z', dollar: false });
    // Short hex is not an address; tickers like 0X0 exist, so it reads as a symbol.
    expect(ref('0x1234')).toEqual({ kind: 'symbol', symbol: '0X1234', dollar: false });
  });

  it('reads tk_<id> as a token id, keeping its case', () => {
    expect(ref('tk_Z60ijKLe8Gr8')).toEqual({ kind: 'id', id: 'tk_Z60ijKLe8Gr8' });
  });

  it('reads <chain>:<address> with the address checked against the chain family', () => {
    expect(ref(`base:${EVM.toUpperCase().replace('0X', '0x')}`)).toEqual({
      kind: 'chain_address',
      chain: 'base',
      address: EVM,
      family: 'evm',
    });
    expect(ref(`ARC:${EVM}`)).toMatchObject({ kind: 'chain_address', chain: 'arc' });
    expect(ref(`robinhood:${EVM}`)).toMatchObject({ kind: 'chain_address', chain: 'robinhood', family: 'evm' });
    expect(ref(`solana:${SOL}`)).toEqual({ kind: 'chain_address', chain: 'solana', address: SOL, family: 'solana' });
    expect(error(`solana:${EVM}`)).toMatch(/not a solana address/);
    expect(error(`eth:${SOL}`)).toMatch(/not a eth address/);
  });

  it('names an unknown chain', () => {
    expect(error(`polygon:${EVM}`)).toMatch(/unknown chain "polygon"/);
  });

  it('reads bare addresses: EVM hex lower-cased, base58 kept as written', () => {
    expect(ref(EVM.replace('e', 'E'))).toEqual({ kind: 'address', address: EVM, family: 'evm' });
    expect(ref(SOL)).toEqual({ kind: 'address', address: SOL, family: 'solana' });
  });

  it('trims surrounding whitespace', () => {
    expect(ref('  $BONK ')).toEqual({ kind: 'symbol', symbol: 'BONK', dollar: true });
  });

  it('refuses what is none of the forms', () => {
    expect(error('')).toMatch(/empty/);
    expect(error('$')).toMatch(/not a \$SYMBOL/);
    expect(error('$PE-PE')).toMatch(/not a \$SYMBOL/);
    expect(error('tk_')).toMatch(/tk_<letters or digits>/);
    expect(error('tk_a-b')).toMatch(/tk_<letters or digits>/);
    expect(error('A'.repeat(21))).toMatch(/not a token reference/);
    expect(error('x'.repeat(129))).toMatch(/longer than 128/);
    // base58 has no 0, O, I or l: 40 characters with an O are neither address nor symbol.
    expect(error('O'.repeat(40))).toMatch(/not a token reference/);
  });
});
