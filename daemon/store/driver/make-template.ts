// `npm run build`'s last step: the prepared store of template.ts in dist/, made once and kept
// while PGlite and its settings stay the same.
import { pino } from 'pino';
import { openPgliteStore } from './pglite.ts';
import { prepareTemplate } from './create.ts';
import { TEMPLATE_DATA_DIR } from './template.ts';

const made = await prepareTemplate(TEMPLATE_DATA_DIR, (dataDir) => openPgliteStore({ dataDir, log: pino({ level: 'silent' }), template: null }));
process.stdout.write(made ? `prepared the store for first starts in ${TEMPLATE_DATA_DIR}\n` : '');
