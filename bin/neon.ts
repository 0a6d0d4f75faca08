#!/usr/bin/env node
/**
 * The `neon` command line. Subcommands live beside the parts they drive; this file only wires
 * them to commander and turns known failures into one clear message and an exit code.
 */
import { Command } from 'commander';
import { registerInfraCommands } from '../infra/infra-command.js';
import { registerStartCommand } from '../infra/start-command.js';
import { reportFailure } from '../infra/cli-errors.js';
import { registerIntakeCommand } from './commands/intake-command.js';
import { registerPipelineCommand } from './commands/pipeline-command.js';
import { registerReplayCommand } from './commands/replay-command.js';
import { registerSpikesCommand } from './commands/spikes-command.js';
import { registerAskCommand } from './commands/ask-command.js';

const program = new Command()
  .name('neon')
  .description('neon-stream: live news → entity interactions → temporal answers')
  .showHelpAfterError();

registerInfraCommands(program);
registerStartCommand(program);
registerReplayCommand(program);
registerIntakeCommand(program);
registerPipelineCommand(program);
registerSpikesCommand(program);
registerAskCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.exitCode = reportFailure(error);
});
