// `chaoslab list` and `chaoslab validate`: the scenario catalogue, without running anything.
// The loader is imported when the command runs (every command's is: `chaoslab <x>` loads only x's modules);
// list reads what it shows from the build's index where that vouches for a file (scenario/catalogue-index.ts).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('validate')
    .description('check scenarios without running them: files, or catalogue names and globs (as `chaoslab run` takes them)')
    .argument('<scenarios...>', 'paths to .yaml files, scenario names (e.g. ack-crash) or globs (e.g. "feed-*")')
    .option('--lab <name>', 'names and globs pick from this lab only (`chaoslab list --lab <name>`)')
    .action(async (words: string[], opts: { lab?: string }) => {
      const [{ validateTargets }, { loadScenario }] = await Promise.all([import('./select.js'), import('../catalogue/load.js')]);
      for (const { file, shown } of validateTargets(words, opts)) {
        loadScenario(file);
        process.stdout.write(`${shown}: ok\n`);
      }
    });

  program
    .command('list')
    .description("list the scenario catalogue: each scenario's name, lab and what it proves")
    .option('--lab <name>', 'only the scenarios of this lab')
    .action(async (opts: { lab?: string }) => {
      const [{ catalogue }, { vouchedScenarios }, { projectRoot, scenariosDir }, { catalogueLines, DEFAULT_COLUMNS }] = await Promise.all([
        import('../catalogue/catalogue-files.js'),
        import('../catalogue/catalogue-index.js'),
        import('../base/paths.js'),
        import('../catalogue/list-lines.js'),
      ]);
      const entries = catalogue(scenariosDir);
      if (opts.lab !== undefined && !entries.some((e) => e.lab === opts.lab)) {
        const { UsageError } = await import('../base/exit-status.js');
        throw new UsageError(`unknown lab "${opts.lab}"; labs: ${[...new Set(entries.map((e) => e.lab))].sort().join(', ')}`);
      }
      // Files the build's index vouches for are not parsed again; the loader is imported only for the others.
      const known = vouchedScenarios(entries, scenariosDir, projectRoot);
      const all =
        known.size === entries.length && new Set(entries.map((e) => e.name)).size === entries.length
          ? entries.map((e) => known.get(e.file)!)
          : (await import('../catalogue/catalogue.js')).listScenarios(scenariosDir, undefined, known);
      const scenarios = all.filter((s) => opts.lab === undefined || s.lab === opts.lab);
      // With several labs, each entry names its lab; summaries wrap at the terminal's width.
      for (const line of catalogueLines(scenarios, process.stdout.columns || DEFAULT_COLUMNS)) process.stdout.write(`${line}\n`);
    });
}
