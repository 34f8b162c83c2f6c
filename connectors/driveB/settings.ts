// DriveB's settings (its registration declares them; config/env.ts parses them with the service's own).
import { requiredHttpUrl, setting } from '../../core/settings.ts';
import { driveThrottleSettings } from '../throttle.ts';

export const driveBSettings = {
  ...driveThrottleSettings,
  driveBApiUrl: setting(
    'DRIVEB_API_URL',
    'https://www.googleapis.com/',
    requiredHttpUrl,
    'Google API root of DriveB: Drive and its uploads; when set to another root, Docs, Sheets and Slides go there too (by default they use their own googleapis.com hosts)',
  ),
  driveBTokenUrl: setting(
    'DRIVEB_TOKEN_URL',
    'https://oauth2.googleapis.com/token',
    requiredHttpUrl,
    'Google OAuth token endpoint of DriveB connections',
  ),
};
