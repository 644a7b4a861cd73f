// The `parley` command (bin/parley.js runs the compiled form of this file).
// Exit codes: 0 done, 1 the command failed, 2 the command line is wrong.
import { ConfigError, loadAdminClientConfig, loadConfig } from '../config.js';
import { DatabaseLockedError } from '../db/client.js';
import { createAdminClient } from './admin-client.js';
import { adminCommand } from './admin.command.js';
import { cleanupCommand, migrateCommand } from './database.commands.js';
import { CommandFailed, UsageError } from './errors.js';
import { startCommand } from './start.command.js';

const USAGE = `Usage: parley <command>

  parley start                      start the server (same as npm start)
  parley migrate                    apply pending database migrations
  parley cleanup                    delete expired rooms once; prints {"deleted": N}

  parley admin tenants create --name NAME [--default-return-url URL] [--timezone ZONE]
  parley admin tenants list
  parley admin organizations create --tenant TENANT_ID --name NAME
  parley admin doctors create --organization ORG_ID --name NAME
  parley admin tokens create --tenant TENANT_ID [--organization ORG_ID] [--label LABEL]
  parley admin tokens revoke TOKEN_ID
  parley admin features set FEATURE on|off --tenant TENANT_ID
  parley admin features set FEATURE on|off|clear --organization ORG_ID
  parley admin webhooks list --tenant TENANT_ID
  parley admin sfu list

Features: permanent_rooms, additional_participants, recording.
start, migrate and cleanup read the server's settings (DATA_DIR, DATABASE_URL, ...).
admin calls the admin API of a running server: PARLEY_URL (default
http://localhost:3000) and PARLEY_ADMIN_TOKEN. Every command prints JSON.
`;

async function run(args: string[]): Promise<unknown> {
  const [command, ...rest] = args;
  switch (command) {
    case undefined:
      throw new UsageError('a command is needed');
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return undefined;
    case 'start':
      return startCommand();
    case 'migrate':
    case 'cleanup':
      if (rest.length) throw new UsageError(`${command} takes no arguments`);
      return command === 'migrate' ? migrateCommand(loadConfig()) : cleanupCommand(loadConfig());
    case 'admin':
      if (rest[0] === '--help' || rest[0] === '-h') {
        process.stdout.write(USAGE);
        return undefined;
      }
      return adminCommand(rest, createAdminClient(loadAdminClientConfig()));
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`parley: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof ConfigError || error instanceof DatabaseLockedError || error instanceof CommandFailed) {
      process.stderr.write(`parley: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`parley: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
