#!/usr/bin/env node
/**
 * The `neon` command line. Subcommands live beside the parts they drive; this file only wires
 * them to commander and turns known failures into one clear message and an exit code.
 */
import { Command } from 'commander';
import { registerInfraCommands } from '../infra/infra-command.js';
import { registerStartCommand } from './commands/start-command.js';
import { reportFailure } from '../infra/cli-errors.js';
import { registerIntakeCommand } from './commands/intake-command.js';
import { registerPipelineCommand } from './commands/pipeline-command.js';
import { registerReplayCommand } from './commands/replay-command.js';
import { registerSpikesCommand } from './commands/spikes-command.js';
import { registerAskCommand } from './commands/ask-command.js';
import { registerEntitiesCommand } from './commands/entities-command.js';
import { registerIngestCommand } from './commands/ingest-command.js';
import { registerToolCommands } from './commands/tool-commands.js';
import { registerEsApiKeysCommand } from './commands/es-api-keys-command.js';
import { registerTopicsCommand } from './commands/topics-command.js';

const program = new Command()
  .name('neon')
  .description('neon-stream: live news → entity interactions → temporal answers')
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nExit codes: 0 done, 1 failure (with what to do), 2 bad usage or configuration, 3 a check failed ' +
      '(topics --max-lag, infra status), 130 interrupted.\nEvery command that prints data takes --json.',
  );

registerStartCommand(program);
registerInfraCommands(program);
registerIngestCommand(program);
registerReplayCommand(program);
registerIntakeCommand(program);
registerPipelineCommand(program);
registerAskCommand(program);
registerSpikesCommand(program);
registerEntitiesCommand(program);
registerTopicsCommand(program);
registerEsApiKeysCommand(program);
registerToolCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  const code = reportFailure(error);
  // A stop that ran out of its budget (StopIncomplete) is still draining: waiting for the event
  // loop to empty would keep the process past the budget it promised. Exit now; what it had not
  // committed is redelivered to the next run.
  if (error instanceof Error && error.name === 'StopIncomplete') process.exit(code);
  process.exitCode = code;
});
