// How the relay command ends when it cannot go on: one line on stderr, never a stack trace, and a non-zero exit
// code (2 for the configuration or the usage, 1 for the rest).

/** @example fail('PORT: expected a port number from 0 to 65535 (got "abc")', 2); */
export function fail(message: string, code: 1 | 2): never {
  process.stderr.write(`shop-lookup-relay: ${message}\n`);
  process.exit(code);
}
