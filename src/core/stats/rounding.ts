// Decimal rounding as Grimmory's statistics do it: Math.round(x * 10^n) / 10^n (halves up).
export const roundTo1 = (x: number): number => Math.round(x * 10) / 10;
export const roundTo2 = (x: number): number => Math.round(x * 100) / 100;
