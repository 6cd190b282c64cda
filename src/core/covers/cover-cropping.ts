// Cover-cropping options; kept apart from the image code so reading them does not load sharp.

/** The cover_cropping_settings application setting (behaviors §7); every option is off by default. */
export interface CoverCropping {
  verticalCroppingEnabled: boolean;
  horizontalCroppingEnabled: boolean;
  aspectRatioThreshold: number;
  smartCroppingEnabled: boolean;
}

export const DEFAULT_COVER_CROPPING: CoverCropping = {
  verticalCroppingEnabled: false,
  horizontalCroppingEnabled: false,
  aspectRatioThreshold: 2.5,
  smartCroppingEnabled: false,
};

