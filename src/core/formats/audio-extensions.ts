/** File extensions of audio tracks (single-file audiobooks and the tracks of folder audiobooks). */
export const AUDIO_TRACK_EXTENSIONS: ReadonlySet<string> = new Set(['m4b', 'm4a', 'mp3', 'opus']);
