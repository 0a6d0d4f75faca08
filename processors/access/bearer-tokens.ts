import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Accepted bearer tokens (API keys), checked in constant time: the given token is hashed and
 * compared with every accepted token's hash, so neither a token's length nor which one matched
 * leaks through timing. Tokens are kept only as hashes.
 */
export class BearerTokens {
  private readonly hashes: readonly Buffer[];

  constructor(tokens: readonly string[]) {
    if (tokens.some((token) => token.length === 0)) throw new Error('bearer tokens must not be empty');
    this.hashes = tokens.map(sha256);
  }

  get size(): number {
    return this.hashes.length;
  }

  /** The token of an `Authorization: Bearer …` header, when it is one of ours; undefined otherwise. */
  match(header: string | undefined): string | undefined {
    if (header === undefined) return undefined;
    const found = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (found === null) return undefined;
    const given = sha256(found[1]!);
    let ok = false;
    for (const expected of this.hashes) ok = timingSafeEqual(given, expected) || ok;
    return ok ? found[1] : undefined;
  }

  accepts(header: string | undefined): boolean {
    return this.match(header) !== undefined;
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
