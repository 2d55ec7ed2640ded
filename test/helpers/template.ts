import { mkdir } from 'node:fs/promises';
import { pgdataDir } from '../../daemon/store/db.ts';
import { copyTemplate, TEMPLATE_DATA_DIR, usableTemplate } from '../../daemon/store/driver/template.ts';

// Gives `dataDir` a fresh store copied from the prepared one that `npm run build` makes (the
// copy a daemon's first start makes itself; daemon/store/driver/template.ts).
export async function seedStore(dataDir: string): Promise<void> {
  const prepared = usableTemplate(TEMPLATE_DATA_DIR);
  if (!prepared) throw new Error(`no prepared store in ${TEMPLATE_DATA_DIR}: run npm run build`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  copyTemplate(prepared, pgdataDir(dataDir));
}
