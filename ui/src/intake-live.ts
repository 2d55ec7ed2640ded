// What the Intake panels follow (DESIGN §20): an issue taken or refused (intake.taken,
// intake.refused) moves its project's mark, and the panel reads the project's intake again.
import type { GroveEvent } from '../../schemas/event.ts';

export interface IntakeState {
  /** the seq of each project's last intake event: its intake is read again when it moves */
  intakeSeq: Map<string, number>;
}

export const emptyIntake = (): IntakeState => ({ intakeSeq: new Map() });

export const isIntakeEvent = (e: GroveEvent) => e.type.startsWith('intake.');

export function applyIntake(state: IntakeState, e: GroveEvent): void {
  if (e.project_id !== null) state.intakeSeq.set(e.project_id, e.seq);
}
