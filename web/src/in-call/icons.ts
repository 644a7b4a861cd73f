// The control bar's icons: a few strokes on a 24-unit grid, drawn inline (no
// image files to fetch on a thin link). Decorative: every button has a text label.
const SVG = 'http://www.w3.org/2000/svg';

const PATHS = {
  mic: 'M9 6a3 3 0 0 1 6 0v5a3 3 0 0 1-6 0zM5 11a7 7 0 0 0 14 0M12 18v3',
  micOff: 'M9 6a3 3 0 0 1 6 0v5a3 3 0 0 1-6 0zM5 11a7 7 0 0 0 14 0M12 18v3M3 3l18 18',
  camera: 'M3 8a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM16 10l5-3v10l-5-3',
  cameraOff: 'M3 8a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM16 10l5-3v10l-5-3M3 3l18 18',
  screen: 'M3 6a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM8 20h8M12 16v4',
  invite: 'M13 8a4 4 0 1 1-8 0a4 4 0 0 1 8 0M2 21c0-4 3-6 7-6s7 2 7 6M19 8v6M16 11h6',
  chat: 'M4 5h16v11H9l-5 4z',
  fullscreen: 'M4 9V4h5M20 9V4h-5M4 15v5h5M20 15v5h-5',
  exitFullscreen: 'M9 4v5H4M15 4v5h5M9 20v-5H4M15 20v-5h5',
  switchCamera: 'M4 9h13l-3-3M20 15H7l3 3',
  devices: 'M4 6h9M17 6h3M4 12h3M11 12h9M4 18h11M19 18h1M13 4v4M7 10v4M15 16v4',
  leave: 'M3 15c5-5 13-5 18 0l-2 3-4-1.5v-3a11 11 0 0 0-6 0v3L5 18z',
  record: 'M5 12a7 7 0 1 0 14 0a7 7 0 1 0-14 0M9.5 12a2.5 2.5 0 1 0 5 0a2.5 2.5 0 1 0-5 0',
  recordStop: 'M5 12a7 7 0 1 0 14 0a7 7 0 1 0-14 0M9.5 9.5h5v5h-5z',
} as const;

export type IconName = keyof typeof PATHS;

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', PATHS[name]);
  svg.append(path);
  return svg;
}
