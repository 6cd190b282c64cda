// The OpenSearch 1.1 description OPDS 1.2 catalogs point their `search` links at: where a reader sends its query.
import { ATOM_TYPE } from './atom.ts';
import { XmlWriter } from './xml.ts';

export const OPENSEARCH_NS = 'http://a9.com/-/spec/opensearch/1.1/';

/** `root` is the catalog's own path (`<basePath>/api/v1/opds`); readers resolve the template against the document. */
export function openSearchDescription(root: string, name: string): string {
  const w = new XmlWriter();
  w.open('OpenSearchDescription', { xmlns: OPENSEARCH_NS });
  // ShortName is limited to 16 characters.
  w.leaf('ShortName', name.slice(0, 16));
  w.leaf('Description', `Search the ${name} catalog`);
  w.leaf('InputEncoding', 'UTF-8');
  w.leaf('OutputEncoding', 'UTF-8');
  w.leaf('Url', undefined, { type: ATOM_TYPE.acquisition, template: `${root}/catalog?q={searchTerms}` });
  w.close();
  return w.toString();
}
