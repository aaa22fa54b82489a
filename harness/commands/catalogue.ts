// `chaoslab list` and `chaoslab validate`: the scenario catalogue, without running anything.
// The loader is imported when the command runs (every command's is: `chaoslab <x>` loads only x's modules);
// list reads what it shows from the build's index where that vouches for a file (scenario/catalogue-index.ts).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('validate')
    .description('check scenario files without running them')
    .argument('<files...>', 'scenario files')
    .action(async (files: string[]) => {
      const { loadScenario } = await import('../catalogue/load.js');
      for (const file of files) {
        loadScenario(file);
        process.stdout.write(`${file}: ok\n`);
      }
    });

  program
    .command('list')
    .description('list the scenario catalogue: name and what each proves')
    .action(async () => {
      const [{ catalogue }, { vouchedScenarios }, { projectRoot, scenariosDir }] = await Promise.all([
        import('../catalogue/catalogue-files.js'),
        import('../catalogue/catalogue-index.js'),
        import('../base/paths.js'),
      ]);
      // Files the build's index vouches for are not parsed again; the loader is imported only for the others.
      const entries = catalogue(scenariosDir);
      const known = vouchedScenarios(entries, scenariosDir, projectRoot);
      const scenarios =
        known.size === entries.length && new Set(entries.map((e) => e.name)).size === entries.length
          ? entries.map((e) => known.get(e.file)!)
          : (await import('../catalogue/catalogue.js')).listScenarios(scenariosDir, undefined, known);
      const width = Math.max(...scenarios.map((s) => s.name.length));
      // With several labs, each line names its lab.
      const labs = new Set(scenarios.map((s) => s.lab));
      for (const s of scenarios) process.stdout.write(`${s.name.padEnd(width)}  ${labs.size > 1 ? `[${s.lab}] ` : ''}${s.description.split(/(?<=\.)\s/)[0]}\n`);
    });
}
