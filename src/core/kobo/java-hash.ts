// Java's String.hashCode, which Grimmory uses to name series for the device (`series_<hash>`): ids stay the same
// for a device moved from Grimmory to Bindery.
export function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}
