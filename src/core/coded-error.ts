// Domain refusals carry a code from a closed set; each caller maps it to its transport (HTTP status, exit code).
export class CodedError<Code extends string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
