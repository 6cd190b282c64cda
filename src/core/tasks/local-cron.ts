// Cron schedules in the server's own time zone, computed without ICU. Left to itself, `cron` names the system zone
// through `Intl.DateTimeFormat().resolvedOptions()` and luxon then works in that zone, and in the default locale,
// through `Intl.DateTimeFormat` objects: that makes ~5 MB of the binary's ICU data resident in an otherwise idle
// daemon (about 8 MB of RSS with the code behind it). luxon's system zone gives the same times from the process's own
// `Date` offsets (so DST changes and a changed TZ are followed), and a fixed locale spares the look-up of the default
// one; cron reads only numeric fields, so the locale changes nothing it computes.
import { CronJob, CronTime } from 'cron';
import type * as Luxon from 'luxon';
import { createRequire } from 'node:module';

let zone: string | undefined;

/** The zone cron is given: typed as an IANA name, but cron hands it to luxon, which takes a zone object as well. */
function serverZone(): string {
  if (zone === undefined) {
    // The luxon cron uses: cron requires its CommonJS build, and an `import` would get its ES module build, another
    // instance with settings of its own (scripts/build.ts keeps both packages out of the bundle for the same reason).
    const { Settings, SystemZone } = createRequire(import.meta.url)('luxon') as typeof Luxon;
    Settings.defaultLocale = 'en-US';
    zone = SystemZone.instance as unknown as string;
  }
  return zone;
}

/** A started job running `onTick` at the times of the six-field `expression` (seconds first), in local time. */
export function localCronJob(expression: string, onTick: () => void): CronJob {
  return CronJob.from({ cronTime: expression, onTick, start: true, timeZone: serverZone() });
}

/** Why cron refuses `expression`, or undefined when it is a valid one. */
export function cronExpressionError(expression: string): Error | undefined {
  try {
    new CronTime(expression, serverZone());
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
