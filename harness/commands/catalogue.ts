// `chaoslab list` and `chaoslab validate`: the scenario catalogue, without running anything.
// The loader is imported when the command runs (every command's is: `chaoslab <x>` loads only x's modules).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('validate')
    .description('check scenario files without running them')
    .argument('<files...>', 'scenario files')
    .action(async (files: string[]) => {
      const { loadScenario } = await import('../scenario/load.js');
      for (const file of files) {
        loadScenario(file);
        process.stdout.write(`${file}: ok\n`);
      }
    });

  program
    .command('list')
    .description('list the scenario catalogue: name and what each proves')
    .action(async () => {
      const [{ listScenarios }, { scenariosDir }] = await Promise.all([import('../scenario/catalogue.js'), import('../paths.js')]);
      const scenarios = listScenarios(scenariosDir);
      const width = Math.max(...scenarios.map((s) => s.name.length));
      // With several labs, each line names its lab.
      const labs = new Set(scenarios.map((s) => s.lab));
      for (const s of scenarios) process.stdout.write(`${s.name.padEnd(width)}  ${labs.size > 1 ? `[${s.lab}] ` : ''}${s.description.split(/(?<=\.)\s/)[0]}\n`);
    });
}
