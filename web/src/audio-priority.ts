// The voice before the picture on a thin link (docs/call.md, "Recovering",
// thin links), for every call connection: the one made ahead
// (spare-connection.ts) and each peer's (peer-connection.ts).

/** Senders whose priority preferAudio has set: it asks nothing more of them. */
const prioritized = new WeakSet<RTCRtpSender>();

/**
 * On a thin link the voice matters more than the picture: audio senders get
 * the high priority of RTCRtpEncodingParameters (bitrate share and DSCP
 * marking), video the low one, which lets the congestion controller take
 * bitrate from the video first. Set ahead on the connection made while the
 * join screen shows (prepareConnection), where the browser has the encodings
 * before negotiation (Chromium), else once connected. Ahead, because each
 * getParameters() is a synchronous call into WebRTC's signaling thread: at
 * `connected`, while that thread sets the call up, the calls held the page
 * 3–7 ms just before the first frame (bench/README.md, browser).
 */
export async function preferAudio(pc: RTCPeerConnection): Promise<void> {
  for (const sender of pc.getSenders()) {
    if (!sender.track || prioritized.has(sender)) continue;
    const priority: RTCPriorityType = sender.track.kind === 'audio' ? 'high' : 'low';
    const parameters = sender.getParameters();
    if (!parameters.encodings?.length) continue;
    if (!parameters.encodings.every((e) => e.priority === priority && e.networkPriority === priority)) {
      for (const encoding of parameters.encodings) {
        encoding.priority = priority;
        encoding.networkPriority = priority;
      }
      try {
        await sender.setParameters(parameters);
      } catch {
        continue; // Tried again at `connected`.
      }
    }
    prioritized.add(sender);
  }
}
