// One request to record (docs/design.md, "Recording with consent", "Consent
// in the call"): a host asked everyone in the call; each answers yes or no.
// The round is over when everyone asked has answered or left, or when its time
// is up (who has not answered then did not agree). Recording starts only if
// every answer counted is yes. Pure: the node that holds the host's
// connection keeps it (handlers/recording.ts) and feeds it what it hears.

export interface Asked {
  peerId: string;
  name: string;
  role: 'host' | 'guest';
}

export interface Answer extends Asked {
  accepted: boolean;
  at: Date;
}

export type RoundOutcome = { done: false } | { done: true; accepted: Answer[]; declined: string[] };

export function createConsentRound(asked: Asked[]) {
  const waitingFor = new Map(asked.map((a) => [a.peerId, a]));
  let answers: Answer[] = [];

  function outcome(timedOut: boolean): RoundOutcome {
    if (waitingFor.size > 0 && !timedOut) return { done: false };
    // Not answered in time: they did not agree (names, for the host).
    const declined = [...answers.filter((a) => !a.accepted).map((a) => a.name), ...[...waitingFor.values()].map((a) => a.name)];
    return { done: true, accepted: answers.filter((a) => a.accepted), declined };
  }

  return {
    /** Whether this participant was asked in this round (and has not answered yet). */
    waitsFor: (peerId: string) => waitingFor.has(peerId),
    /** An answer; one from someone not asked, or answering twice, changes nothing. */
    answer(peerId: string, accepted: boolean, at: Date): RoundOutcome {
      const who = waitingFor.get(peerId);
      if (who) {
        waitingFor.delete(peerId);
        answers.push({ ...who, accepted, at });
      }
      return outcome(false);
    },
    /** Someone asked left the call during the round: they no longer count, whatever they answered. */
    left(peerId: string): RoundOutcome {
      waitingFor.delete(peerId);
      answers = answers.filter((a) => a.peerId !== peerId);
      return outcome(false);
    },
    /** The time to answer is up. */
    timedOut: (): RoundOutcome => outcome(true),
  };
}

export type ConsentRound = ReturnType<typeof createConsentRound>;
