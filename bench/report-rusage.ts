/**
 * Preloaded (`node --import`) into a child whose peak memory a benchmark reports: at exit, writes
 * the process's resource usage as one JSON line to the file named by GATEHOUSE_BENCH_RUSAGE.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.GATEHOUSE_BENCH_RUSAGE;
if (file) {
  process.on('exit', () => {
    writeFileSync(file, `${JSON.stringify(process.resourceUsage())}\n`);
  });
}
