// Which source files a test file's coverage counts for. End-to-end files (test/e2e/) drive
// child processes, whose coverage is not collected: they count for nothing, so in-process
// modules must be covered by their own unit tests, not by accident.
export default function coverageMap(testFile) {
  if (testFile.includes('test/e2e/') || /test\/_end-to-end-\d\.test\.ts$/.test(testFile)) return null;
  return [];
}
