// Opens the catalog at a path or URL once, which applies every pending migration, and closes it.
import { openStore } from '../src/core/store/store.ts';

const location = process.argv[2];
if (!location) {
  process.stderr.write('usage: node scripts/migrate-catalog.ts PATH|URL\n');
  process.exit(2);
}
const store = await openStore(location);
await store.close();
