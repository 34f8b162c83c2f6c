// Manage's X-Email (spec 5.2): the e-mail of the user who started the operation, recorded on the document
// it made (extension column, returned as initiatorEmail).
export const m005 = {
  version: 5,
  name: 'document initiator e-mail',
  sql: `ALTER TABLE documents ADD COLUMN initiator_email text NOT NULL DEFAULT '';`,
};
