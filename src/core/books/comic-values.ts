// The values of Grimmory's ComicMetadata without its lock flags: what a provider, a sidecar or an edit can say of a
// comic. One shape for all of them, under the wire names.
export interface ComicValues {
  issueNumber?: string;
  volumeName?: string;
  volumeNumber?: number;
  storyArc?: string;
  storyArcNumber?: number;
  alternateSeries?: string;
  alternateIssue?: string;
  pencillers?: string[];
  inkers?: string[];
  colorists?: string[];
  letterers?: string[];
  coverArtists?: string[];
  editors?: string[];
  imprint?: string;
  format?: string;
  blackAndWhite?: boolean;
  manga?: boolean;
  readingDirection?: string;
  characters?: string[];
  teams?: string[];
  locations?: string[];
  webLink?: string;
  notes?: string;
}
