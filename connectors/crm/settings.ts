// crm's settings (its registration declares them; config/env.ts parses them with the service's own).
import { bytes, ConfigError, hostList, type Parser, setting } from '../../core/settings.ts';

const apiVersion: Parser<string> = (raw, name) => {
  if (!/^\d{2,3}\.0$/.test(raw)) throw new ConfigError(`${name} must be a Salesforce API version such as 62.0, got ${JSON.stringify(raw)}`);
  return raw;
};

export const crmSettings = {
  crmApiVersion: setting('CRM_API_VERSION', '62.0', apiVersion, 'Salesforce REST API version of crm connections'),
  crmLoginHosts: setting(
    'CRM_LOGIN_HOSTS',
    ['*.my.salesforce.com', 'login.salesforce.com', 'test.salesforce.com'],
    hostList,
    "Hosts a crm connection's loginUrl (and the org's instance URL) may name, https only (comma-separated, *.domain allowed; an entry http://host:port also allows plain http to exactly that, for local test servers): the tenant picks its org's login host, the service decides which hosts are Salesforce",
  ),
  crmMultipartBytes: setting(
    'CRM_MULTIPART_BYTES',
    30 * 1024 * 1024,
    bytes,
    'Files larger than this go to Salesforce as a multipart request instead of one JSON body (the REST API refuses JSON bodies over about 50 MB, and base64 adds a third)',
  ),
};
