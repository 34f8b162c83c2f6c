// The same suite against the run's PostgreSQL server: one dialect, checked on both engines.
import { configurationSuite } from './configurations-suite.ts';

configurationSuite('postgres');
