// Exit codes (documented in docs/cli.md; scripts depend on them) and the error that carries one.
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  PARTIAL: 5,
  STORE: 6,
  DAMAGED: 7,
} as const;

export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  readonly code: string;
  constructor(code: string, message: string, exitCode: number) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}
