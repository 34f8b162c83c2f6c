// Child process of orphan.test.ts: starts a one-instance pool (its work directory in argv[3], else the OS's temp
// dir), prints its profile directory, then converts a long document; the test SIGKILLs this process mid-conversion.
import { LibreOfficePool } from '../../../converter/index.ts';
import { longDocx } from './fixtures.ts';

const pool = new LibreOfficePool({ size: 1, ...(process.argv[3] ? { tmpDir: process.argv[3] } : {}) });
await pool.start();
process.stdout.write(`${JSON.stringify({ baseDir: pool.baseDir, pid: pool.status().instances[0]?.pid })}\n`);
await pool.convert(longDocx(Number(process.argv[2] ?? 40000)), { from: 'docx', to: 'pdf' });
process.stdout.write('finished\n');
await pool.stop();
