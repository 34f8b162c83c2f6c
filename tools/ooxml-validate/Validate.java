import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import javax.xml.XMLConstants;
import javax.xml.namespace.QName;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.apache.poi.schemas.ooxml.system.ooxml.TypeSystemHolder;
import org.apache.xmlbeans.SchemaGlobalElement;
import org.apache.xmlbeans.SchemaType;
import org.apache.xmlbeans.SchemaTypeLoader;
import org.apache.xmlbeans.SchemaTypeSystem;
import org.apache.xmlbeans.XmlBeans;
import org.apache.xmlbeans.XmlError;
import org.apache.xmlbeans.XmlObject;
import org.apache.xmlbeans.XmlOptions;
import org.w3c.dom.Attr;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;

/**
 * Validates Office packages (docx/xlsx/pptx and their macro/template variants) against the ECMA-376
 * transitional schemas compiled into Apache POI's poi-ooxml-full.
 *
 * Every XML part whose root element the schemas define is validated, after markup compatibility
 * processing as an Office application does it (ECMA-376 Part 3): content in an ignorable namespace the
 * schemas do not define is dropped (kept as content where mc:ProcessContent says so), and
 * mc:AlternateContent becomes its first mc:Choice whose required namespaces the schemas define, else its
 * mc:Fallback. Parts of other vocabularies (custom XML, Office 2010+ extension parts) are counted, not judged.
 *
 * Usage: java -cp CP Validate.java FILE_OR_DIR... ; prints each invalid file with its errors, then
 * "files N, valid N, invalid N" (and the part counts); exit 1 when a file is invalid or none was found.
 */
@SuppressWarnings("deprecation")
public final class Validate {
  static final String MC = "http://schemas.openxmlformats.org/markup-compatibility/2006";
  static final int MAX_ERRORS_PER_PART = 20;

  static final SchemaTypeSystem SCHEMAS = TypeSystemHolder.typeSystem;
  static final SchemaTypeLoader LOADER = XmlBeans.typeLoaderUnion(SCHEMAS, XmlBeans.getBuiltinTypeSystem());
  /** Namespaces the schemas define: what an application built on them "understands". */
  static final Set<String> UNDERSTOOD = new HashSet<>();

  static {
    for (SchemaGlobalElement e : SCHEMAS.globalElements()) UNDERSTOOD.add(e.getName().getNamespaceURI());
    for (SchemaType t : SCHEMAS.globalTypes()) UNDERSTOOD.add(t.getName().getNamespaceURI());
    for (var a : SCHEMAS.globalAttributes()) UNDERSTOOD.add(a.getName().getNamespaceURI());
    // POI also compiles some of Microsoft's later extension schemas (w14, x14, chartex...); an ECMA-376
    // consumer does not understand those namespaces, so their ignorable content is dropped, as Office 2007 does.
    UNDERSTOOD.removeIf(ns -> ns.startsWith("http://schemas.microsoft.com/office/"));
    UNDERSTOOD.add(XMLConstants.XML_NS_URI);
  }

  static int partsValidated = 0;
  static int partsWithoutSchema = 0;

  public static void main(String[] args) throws Exception {
    List<Path> files = new ArrayList<>();
    for (String a : args) {
      Path p = Path.of(a);
      if (Files.isDirectory(p)) {
        try (Stream<Path> s = Files.walk(p)) {
          s.filter(Files::isRegularFile).filter(Validate::isOffice)
              .filter(f -> !f.getParent().getFileName().toString().equals("templates")).sorted().forEach(files::add);
        }
      } else if (Files.isRegularFile(p)) {
        files.add(p);
      }
    }
    int valid = 0;
    int invalid = 0;
    int inherited = 0;
    for (Path f : files) {
      List<String> problems = validatePackage(Files.readAllBytes(f));
      // An output made from a template (FILE~<template digest>.ext, the template under templates/) is judged
      // on what rendering added: a problem its template already has (same kind of part, same message) is
      // the template's, counted apart.
      Path template = templateOf(f);
      if (template != null && !problems.isEmpty()) {
        Set<String> known = new HashSet<>();
        for (String p : validatePackage(Files.readAllBytes(template))) known.add(withoutLocation(p));
        int before = problems.size();
        problems.removeIf(p -> known.contains(withoutLocation(p)));
        if (problems.size() < before) inherited++;
      }
      if (problems.isEmpty()) {
        valid++;
      } else {
        invalid++;
        System.out.println("INVALID " + f + (template == null ? "" : " (template " + template.getFileName() + ")"));
        for (String p : problems) System.out.println("  " + p);
      }
    }
    System.out.println("parts validated " + partsValidated + ", parts of other vocabularies " + partsWithoutSchema
        + ", valid files whose template has the same problems " + inherited);
    System.out.println("files " + files.size() + ", valid " + valid + ", invalid " + invalid);
    System.exit(invalid > 0 || files.isEmpty() ? 1 : 0);
  }

  static final java.util.regex.Pattern TEMPLATE_REF = java.util.regex.Pattern.compile("~([0-9a-f]{16})\\.([a-z]+)$");

  /** The template an output was rendered from, when the test that made it kept it (templates/<digest>.ext). */
  static Path templateOf(Path output) {
    var m = TEMPLATE_REF.matcher(output.getFileName().toString());
    if (!m.find()) return null;
    Path t = output.resolveSibling("templates").resolve(m.group(1) + "." + m.group(2));
    return Files.isRegularFile(t) ? t : null;
  }

  /** A problem without where it is: the part's kind (numbers dropped: slide3 is a slide) and the message. */
  static String withoutLocation(String problem) {
    int colon = problem.indexOf(": ");
    String part = colon < 0 ? "" : problem.substring(0, colon).replaceAll("\\d+", "#");
    String message = colon < 0 ? problem : problem.substring(colon + 2);
    return part + ": " + message.replaceAll(" \\(at /[^)]*\\)$", "");
  }

  static boolean isOffice(Path p) {
    String n = p.getFileName().toString().toLowerCase();
    return n.matches(".*\\.(docx|docm|dotx|dotm|xlsx|xlsm|xltx|xltm|pptx|pptm|potx|potm)$");
  }

  static List<String> validatePackage(byte[] bytes) {
    List<String> problems = new ArrayList<>();
    Map<String, byte[]> parts = new HashMap<>();
    try (ZipInputStream zip = new ZipInputStream(new ByteArrayInputStream(bytes))) {
      for (ZipEntry e = zip.getNextEntry(); e != null; e = zip.getNextEntry()) {
        if (!e.isDirectory()) parts.put(e.getName(), zip.readAllBytes());
      }
    } catch (IOException e) {
      problems.add("not a readable zip package: " + e.getMessage());
      return problems;
    }
    if (!parts.containsKey("[Content_Types].xml")) problems.add("no [Content_Types].xml");
    for (var entry : parts.entrySet().stream().sorted(Map.Entry.comparingByKey()).toList()) {
      String name = entry.getKey();
      String lower = name.toLowerCase();
      if (!(lower.endsWith(".xml") || lower.endsWith(".rels") || lower.endsWith(".vml"))) continue;
      validatePart(name, entry.getValue(), problems);
    }
    return problems;
  }

  static DocumentBuilder builder() throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    f.setExpandEntityReferences(false);
    return f.newDocumentBuilder();
  }

  static void validatePart(String name, byte[] xml, List<String> problems) {
    Document doc;
    try {
      doc = builder().parse(new ByteArrayInputStream(xml));
    } catch (Exception e) {
      problems.add(name + ": not well-formed XML: " + e.getMessage());
      return;
    }
    Element root = doc.getDocumentElement();
    QName rootName = new QName(nsOf(root), root.getLocalName());
    SchemaGlobalElement global = LOADER.findElement(rootName);
    if (global == null) {
      partsWithoutSchema++;
      return;
    }
    List<String> mce = new ArrayList<>();
    processCompatibility(root, new HashSet<>(), new HashSet<>(), mce);
    for (String m : mce) problems.add(name + ": " + m);
    cellsEndWithParagraphs(root, name, problems);
    partsValidated++;
    List<XmlError> errors = new ArrayList<>();
    try {
      XmlOptions load = new XmlOptions().setLoadLineNumbers();
      XmlObject obj = LOADER.parse(doc, null, load);
      obj.validate(new XmlOptions().setErrorListener(errors));
    } catch (Exception e) {
      problems.add(name + ": cannot be loaded for validation: " + e.getMessage());
      return;
    }
    int n = 0;
    for (XmlError e : errors) {
      if (n++ == MAX_ERRORS_PER_PART) {
        problems.add(name + ": ... " + (errors.size() - MAX_ERRORS_PER_PART) + " more");
        break;
      }
      problems.add(name + ": " + e.getMessage() + where(e));
    }
  }

  static String where(XmlError e) {
    var c = e.getCursorLocation();
    if (c == null) return "";
    try {
      @SuppressWarnings("deprecation")
      Node node = c.getDomNode();
      StringBuilder path = new StringBuilder();
      for (Node x = node; x != null && x.getNodeType() == Node.ELEMENT_NODE; x = x.getParentNode()) {
        path.insert(0, "/" + x.getNodeName());
      }
      return path.length() == 0 ? "" : " (at " + path + ")";
    } catch (RuntimeException ex) {
      return "";
    } finally {
      c.dispose();
    }
  }

  static String nsOf(Node n) {
    String ns = n.getNamespaceURI();
    return ns == null ? "" : ns;
  }

  /**
   * Markup compatibility processing (ECMA-376 Part 3, section 10) with the schemas' namespaces as the
   * understood ones. `ignorable` and `processContent` are the namespaces in scope for this element.
   */
  static void processCompatibility(Element el, Set<String> ignorableIn, Set<String> processContentIn, List<String> problems) {
    Set<String> ignorable = ignorableIn;
    Set<String> processContent = processContentIn;
    String ig = el.getAttributeNS(MC, "Ignorable");
    if (!ig.isEmpty()) {
      ignorable = new HashSet<>(ignorableIn);
      for (String prefix : ig.trim().split("\\s+")) {
        String ns = el.lookupNamespaceURI(prefix);
        if (ns == null) problems.add("mc:Ignorable names the undeclared prefix " + prefix);
        else ignorable.add(ns);
      }
    }
    String pc = el.getAttributeNS(MC, "ProcessContent");
    if (!pc.isEmpty()) {
      processContent = new HashSet<>(processContentIn);
      for (String qn : pc.trim().split("\\s+")) {
        String prefix = qn.contains(":") ? qn.substring(0, qn.indexOf(':')) : qn;
        String ns = el.lookupNamespaceURI(prefix);
        if (ns != null) processContent.add(ns);
      }
    }
    String mu = el.getAttributeNS(MC, "MustUnderstand");
    if (!mu.isEmpty()) {
      for (String prefix : mu.trim().split("\\s+")) {
        String ns = el.lookupNamespaceURI(prefix);
        if (ns == null || !UNDERSTOOD.contains(ns)) problems.add("mc:MustUnderstand names a namespace that is not understood: " + prefix);
      }
    }
    // Attributes: compatibility attributes go, and those of ignorable namespaces that are not understood.
    NamedNodeMap attrs = el.getAttributes();
    for (int i = attrs.getLength() - 1; i >= 0; i--) {
      Attr a = (Attr) attrs.item(i);
      String ns = nsOf(a);
      if (ns.isEmpty() || ns.equals(XMLConstants.XMLNS_ATTRIBUTE_NS_URI)) continue;
      // xml:space is XML's own, allowed on any element (Office writes it on SpreadsheetML's simple-typed
      // <t>, whose schema type could not declare it).
      if (ns.equals(XMLConstants.XML_NS_URI) && "space".equals(a.getLocalName())) {
        el.removeAttributeNode(a);
        continue;
      }
      if (ns.equals(MC) || (!UNDERSTOOD.contains(ns) && ignorable.contains(ns))) el.removeAttributeNode(a);
    }
    Node child = el.getFirstChild();
    while (child != null) {
      Node next = child.getNextSibling();
      if (child instanceof Element c) {
        String ns = nsOf(c);
        if (ns.equals(MC) && "AlternateContent".equals(c.getLocalName())) {
          Element chosen = chooseAlternative(c, problems);
          if (chosen != null) {
            Node first = chosen.getFirstChild();
            // The chosen branch's children take the AlternateContent's place, then are processed in turn.
            while (chosen.getFirstChild() != null) el.insertBefore(chosen.getFirstChild(), c);
            next = first != null ? first : c.getNextSibling();
          }
          el.removeChild(c);
          child = next == c ? null : next;
          continue;
        } else if (ns.equals(MC)) {
          problems.add("mc:" + c.getLocalName() + " outside mc:AlternateContent");
          el.removeChild(c);
        } else if (!UNDERSTOOD.contains(ns) && ignorable.contains(ns)) {
          if (processContent.contains(ns)) {
            Node first = c.getFirstChild();
            while (c.getFirstChild() != null) el.insertBefore(c.getFirstChild(), c);
            el.removeChild(c);
            child = first != null ? first : next;
            continue;
          }
          el.removeChild(c);
        } else {
          processCompatibility(c, ignorable, processContent, problems);
        }
      }
      child = next;
    }
  }

  static final String W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

  /**
   * A rule the schema cannot say (ISO/IEC 29500 17.4.66) and Word enforces: a table cell's last block is a
   * paragraph, directly or as the last block of the content control or custom XML element that ends it.
   */
  static void cellsEndWithParagraphs(Element root, String part, List<String> problems) {
    var cells = root.getElementsByTagNameNS(W, "tc");
    int bad = 0;
    for (int i = 0; i < cells.getLength(); i++) if (!endsWithParagraph((Element) cells.item(i))) bad++;
    if (bad > 0) problems.add(part + ": " + bad + " table cell(s) whose last block is not a paragraph (w:tc must end with w:p)");
  }

  static boolean endsWithParagraph(Element el) {
    Node last = el.getLastChild();
    while (last != null && !(last instanceof Element)) last = last.getPreviousSibling();
    if (!(last instanceof Element e) || !W.equals(nsOf(e))) return false;
    String n = e.getLocalName();
    if ("p".equals(n)) return true;
    return ("sdt".equals(n) || "sdtContent".equals(n) || "customXml".equals(n)) && endsWithParagraph(e);
  }

  /** The first mc:Choice whose Requires namespaces are all understood, else mc:Fallback, else null. */
  static Element chooseAlternative(Element ac, List<String> problems) {
    Element fallback = null;
    for (Node n = ac.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (!(n instanceof Element c) || !MC.equals(nsOf(c))) continue;
      if ("Choice".equals(c.getLocalName())) {
        String req = c.getAttribute("Requires");
        boolean ok = !req.isEmpty();
        for (String prefix : req.trim().split("\\s+")) {
          String ns = c.lookupNamespaceURI(prefix);
          if (ns == null || !UNDERSTOOD.contains(ns)) ok = false;
        }
        if (ok) return c;
      } else if ("Fallback".equals(c.getLocalName())) {
        fallback = c;
      }
    }
    return fallback;
  }
}
