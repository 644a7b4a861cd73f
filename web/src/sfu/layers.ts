// Simulcast (docs/design.md, "Group calls through an SFU"): what the page
// publishes, and which layer it asks for of each video it receives. Two layers
// of the camera: a full one and one at half the size; the SFU forwards one of
// them to each subscriber. Through Janus two layers of Chromium's 640x480
// camera measured 1.6x the upload of a single one, within the 2x budget of a
// call of two (three layers would cost more for a size no tile here needs).

/** Highest first, as Janus's own client sends them (rid h, then the layer at half size). */
export const CAMERA_ENCODINGS: RTCRtpEncodingParameters[] = [
  { rid: 'h', maxBitrate: 600_000 },
  { rid: 'l', maxBitrate: 150_000, scaleResolutionDownBy: 2 },
];

/** Janus numbers layers from the smallest: 0 the half-size one, 1 the full one. */
export type Substream = 0 | 1;

/**
 * The layer a tile of this width (CSS pixels, at this device pixel ratio)
 * needs: the small one (320 pixels wide) until the tile shows more than that
 * many device pixels. A thumbnail never pulls the full layer.
 */
export function layerFor(tileWidth: number, pixelRatio = 1): Substream {
  return tileWidth * pixelRatio > 360 ? 1 : 0;
}
