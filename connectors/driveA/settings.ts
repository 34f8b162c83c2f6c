// DriveA's settings (its registration declares them; config/env.ts parses them with the service's own).
import { requiredHttpUrl, setting } from '../../core/settings.ts';
import { driveThrottleSettings } from '../throttle.ts';

export const driveASettings = {
  driveAGraphUrl: setting(
    'DRIVEA_GRAPH_URL',
    'https://graph.microsoft.com/v1.0',
    requiredHttpUrl,
    'Microsoft Graph endpoint of DriveA (OneDrive / SharePoint), including the API version',
  ),
  driveALoginUrl: setting(
    'DRIVEA_LOGIN_URL',
    'https://login.microsoftonline.com',
    requiredHttpUrl,
    'Microsoft Entra token endpoint host of DriveA connections ({tenant}/oauth2/v2.0/token is appended)',
  ),
  ...driveThrottleSettings,
};
