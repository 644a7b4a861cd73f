// How a command fails: a usage error (exit 2: the command line is wrong) or a
// failure (exit 1: the command was right but did not succeed). main.ts prints
// the message and exits; nothing else in the CLI calls process.exit.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export class CommandFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailed';
  }
}
