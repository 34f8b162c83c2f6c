import { configurationSuite } from './configurations-suite.ts';

configurationSuite('pglite');
