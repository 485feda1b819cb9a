// Conformance (spec §20.2: all 80 cases of Kruise's TestCalculateDiffsWithExpectation, in file order) and
// property tests for computeReplicaDiff.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CloneSet, IntOrString } from '../../api/cloneset.ts';
import { FEATURE_GATE_DEFAULTS, type LifecycleState } from '../../api/well-known.ts';
import type { Pod } from '../../kube/types.ts';
import {
  computeReplicaDiff,
  replicaDiffInputFor,
  resolveLimits,
  type PodFacts,
  type ReplicaDiff,
  type ReplicaDiffInput,
} from './replica-diff.ts';

// The table of spec §20.2, verbatim. Columns: # | R | P | MU | MS | extras | pods | expected.
// Pod codes: n/o = update/old revision; lifecycle N Normal, PD PreparingDelete, PU PreparingUpdate, U Updating;
// + = Running & Ready (available when Normal), - = not ready; trailing D = specified-delete.
// Extras: cur==upd, noRollbackGate (CloneSetPartitionRollback off; on everywhere else), scaleMU=,
// exclPD (excludePreparingDelete), paused, PUasUpdate (Scale flavour with gate PreparingUpdateAsUpdate on).
// Expected: up/upOld/upLimit/down/downOld/delReady/surge/surgeOld/upd/updMU; omitted fields are 0.
const TABLE = `
| 1 | 0 | 0 | 1 | 0 |  | (none) | {} |
| 2 | 5 | 0 | 1 | 0 |  | (none) | up=5, upLimit=5 |
| 3 | 5 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ nN+ | {} |
| 4 | 5 | 0 | 1 | 0 |  | nN+D nN+ nN+ nN+ nN+ | delReady=1 |
| 5 | 5 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ | up=1, upLimit=1 |
| 6 | 5 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ nN+ | {} |
| 7 | 5 | 0 | 1 | 0 |  | nN+D nN+D nN+ nN+ nN+ | delReady=1 |
| 8 | 5 | 0 | 1 | 0 |  | nN+D nN+ nN+ nN+ | up=1, upLimit=1 |
| 9 | 5 | 0 | 1 | 0 |  | nN+D nN+ nN+ nN+ nN- | {} |
| 10 | 5 | 0 | 1 | 0 |  | nN+D nN+ nN+ nN+ nN+ | delReady=1 |
| 11 | 5 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ | up=1, upLimit=1 |
| 12 | 5 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ nN+ | {} |
| 13 | 4 | 0 | 1 | 0 |  | nN-D nN-D nN+ nN+ nN+ | delReady=2 |
| 14 | 4 | 0 | 1 | 0 |  | nN+ nN+ nN+ | up=1, upLimit=1 |
| 15 | 4 | 0 | 1 | 0 |  | nN+ nN+ nN+ nN+ | {} |
| 16 | 5 | 3 | 1 | 0 |  | oN+ oN+ oN+ oN+ oN+ | upd=2, updMU=1 |
| 17 | 5 | 3 | 1 | 0 |  | nN+ oN+ oN+ oN+ oN+ | upd=1, updMU=1 |
| 18 | 5 | 3 | 1 | 0 |  | nN+ nN+ oN+ oN+ oN+ | {} |
| 19 | 5 | 4 | 2 | 0 |  | nN+ nN+ nN+ nN+ oN+ | upd=-3, updMU=2 |
| 20 | 5 | 4 | 2 | 0 |  | nN+ nN+ oN+ oN+ oN+ | upd=-1, updMU=2 |
| 21 | 5 | 4 | 2 | 0 |  | nN+ oN+ oN+ oN+ oN+ | {} |
| 22 | 5 | 0 | 0 | 1 |  | nN+D nN+ nN+ nN+ nN+ | up=1, surge=1, upLimit=1 |
| 23 | 5 | 0 | 0 | 1 |  | nN+D nN+ nN+ nN+ nN+ nN- | surge=1 |
| 24 | 5 | 0 | 0 | 1 |  | nN+D nN+ nN+ nN+ nN+ nN+ | delReady=1, surge=1 |
| 25 | 5 | 0 | 0 | 1 |  | nN+ nN+ nN+ nN+ nN+ | {} |
| 26 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ oN+ | up=1, surge=1, upd=2, updMU=1, upLimit=1 |
| 27 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ oN+ nN- | surge=1, upd=1, updMU=2 |
| 28 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ nU- nN- | down=1, downOld=1 |
| 29 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ nN+ nN- | down=1, downOld=1, delReady=1 |
| 30 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ oN+ | up=1, surge=1, upd=2, updMU=1, upLimit=1 |
| 31 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ oN+ nN- | surge=1, upd=1, updMU=2 |
| 32 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ oN+D nN- | surge=1, surgeOld=1, delReady=1, upd=1, updMU=2 |
| 33 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ nN- | surge=1, up=1, upd=1, updMU=1, upLimit=1 |
| 34 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ nN- nN- | down=1, downOld=1 |
| 35 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ oN+ nN+ nN- | down=1, downOld=1, delReady=1 |
| 36 | 5 | 3 | 1 | 1 |  | oN+ oN+ oN+ nN+ nN+ | {} |
| 37 | 5 | 99% | 3 | 2 |  | oN+ oN+ oN+ oN+ oN+ | up=1, surge=1, upd=1, updMU=3, upLimit=1 |
| 38 | 5 | 99% | 3 | 2 |  | oN+ oN+ oN+ oN+ oN+ nN- | down=1, downOld=1, delReady=3 |
| 39 | 5 | 99% | 3 | 2 |  | oN+ oN+ oN+ oN+ nN- | {} |
| 40 | 5 | 99% | 40% | 30% |  | oN+ oN+ oN+ oN+ oN+ | up=1, surge=1, upd=1, updMU=2, upLimit=1 |
| 41 | 5 | 99% | 40% | 30% |  | oN+ oN+ oN+ oN+ oN+ nN- | down=1, downOld=1, delReady=2 |
| 42 | 5 | 99% | 40% | 30% |  | oN+ oN+ oN+ oN+ nN- | {} |
| 43 | 5 | 99% | 30% | 30% |  | oN+ oN+ oN+ oN+ oN+ | up=1, surge=1, upd=1, updMU=1, upLimit=1 |
| 44 | 5 | 99% | 30% | 30% |  | oN+ oN+ oN+ oN+ oN+ nN- | down=1, downOld=1, delReady=1 |
| 45 | 5 | 99% | 30% | 30% |  | oN+ oN+ oN+ oN+ nN- | {} |
| 46 | 5 | 0 | 1 | 0 | cur==upd | nN+ nN+ nN+ nN+ nN+ | {} |
| 47 | 5 | 3 | 1 | 0 | cur==upd | nN+ nN+ nN+ nN+ nN+ | {} |
| 48 | 5 | 3 | 1 | 0 | cur==upd | oN+ oN+ nN+ nN+ nN+ | {} |
| 49 | 5 | 1 | 1 | 0 | cur==upd | oN+ oN+ oN+ nN+ nN+ | upd=2, updMU=1 |
| 50 | 5 | 1 | 2 | 0 | cur==upd | oN+ oN+ nN+ nN+ | up=1, upd=1, updMU=1, upLimit=1 |
| 51 | 5 | 1 | 1 | 0 | cur==upd | oN+ oN+ oN+ nN+ nN+ nN+ | down=1, downOld=2, delReady=2, upd=1, updMU=2 |
| 52 | 5 | 4 | 1 | 0 | noRollbackGate | oN+ nN+ nN+ nN+ nN+ | {} |
| 53 | 5 | 0 | 1 | 0 | scaleMU=2 | (none) | up=5, upLimit=2 |
| 54 | 6 | 0 | 1 | 0 | scaleMU=2 | nN+ nN+ nN- | up=3, upLimit=1 |
| 55 | 6 | 0 | 1 | 0 | scaleMU=2 | nN+ nN- nN- | up=3 |
| 56 | 3 | 0 | 1 | 0 |  | nN+ nN+ nN+D | delReady=1 |
| 57 | 3 | 0 | 1 | 0 |  | nN+ nN+ nPD+D | {} |
| 58 | 3 | 0 | 1 | 0 |  | nN+ nN+ | up=1, upLimit=1 |
| 59 | 3 | 0 | 1 | 0 |  | nN+ nN+ nN- | {} |
| 60 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+D | delReady=1 |
| 61 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D | up=1, upLimit=1 |
| 62 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D nN- | {} |
| 63 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D nN- | {} |
| 64 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+D | delReady=1 |
| 65 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D | up=1, upLimit=1 |
| 66 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D nN- | {} |
| 67 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+ nN- | down=1, delReady=1 |
| 68 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+ | {} |
| 69 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+ | {} |
| 70 | 2 | 0 | 1 | 0 | exclPD | nN+ nN+ nN+D | delReady=2 |
| 71 | 2 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D | {} |
| 72 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D | up=1, upLimit=1 |
| 73 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nPD+D nN- | {} |
| 74 | 3 | 0 | 1 | 0 | exclPD | nN+ nN+ nN- | {} |
| 75 | 4 | 90% | 1 | 0 | exclPD PUasUpdate | oPU+ oN+ oN+ | up=1, upLimit=1, upOld=1 |
| 76 | 4 | 2 | 1 | 0 | exclPD PUasUpdate | oPU+ oN+ oN+ | up=1, upLimit=1 |
| 77 | 5 | 0 | 0 | 3 | paused | oN+ oN+ oN+ | up=2, upLimit=2, upd=3, updMU=-2 |
| 78 | 3 | 0 | 0 | 3 | paused | oN+ oN+ oN+ oN+ oN+ | down=2, downOld=5, delReady=2, upd=3, updMU=2 |
| 79 | 5 | 0 | 0 | 3 | paused | oN+ oN+ oN+ oN+ oN+ nN- nN- nN- | down=3, downOld=5, upd=2, updMU=3 |
| 80 | 5 | 2 | 0 | 3 | paused | oN+ oN+ oN+ oN+ oN+ nN- nN- nN- | down=3, downOld=3 |
`;
