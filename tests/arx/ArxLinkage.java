/*
 * ArxLinkage: ARX's own k-map and delta-presence verdicts for a research subset of a population,
 * for one given transformation (no anonymization search). A test helper of anonaudit; it links
 * against ARX (https://arx.deidentifier.org, Apache-2.0), which is not shipped with anonaudit.
 *
 * Run with Java 17+ as a single source file:
 *
 *   java -cp 'ARX_JARS/*' tests/arx/ArxLinkage.java --population POP.csv [--sep ';']
 *        (--release REL.csv | --rows 0,5,9 | --rows @ROWS.txt) --qi A,B,C
 *        [--hierarchy A=FILE]... [--levels A=1,B=0] [--k 2,5] [--delta 0:1,0.1:0.5] [--classes]
 *        [--and OPTIONS OF ANOTHER CASE]...
 *
 * The population CSV has a header line; the release CSV the same header (its QI columns are
 * used), every row of it a row of the population (matched by ARX's DataSubset.create(Data,
 * Data) on the QI values); --rows gives the subset as 0-based data-row indices of the
 * population. Hierarchies are ARX hierarchy files (same separator); a QI without one gets
 * the identity hierarchy. Levels default to 0 (the data as is).
 *
 * How the verdicts are read off: ARX is configured with one privacy model -- KMap(k, subset)
 * or DPresence(dMin, dMax, subset) -- a suppression limit of 0 and, through
 * DataDefinition.setMinimum/MaximumGeneralization(qi, level), a lattice of exactly one node
 * (the given levels). ARX evaluates that node; the model holds iff the node is ANONYMOUS
 * (equivalently, ARX finds a global optimum). With a suppression limit of 1 instead, ARX
 * suppresses exactly the released records of the classes that fail KMap(k): their number is
 * read off the research subset's view of the output.
 *
 * Per-class figures (--classes) come from ARX's own grouping: a KMap(1, subset) whose
 * isAnonymous() records each class's HashGroupifyEntry.count (released records) and .pcount
 * (population records) and then answers as KMap does.
 *
 * Output: one JSON object a line on stdout, one line per case (cases separated by --and share
 * one JVM start).
 */

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.DataSubset;
import org.deidentifier.arx.criteria.DPresence;
import org.deidentifier.arx.criteria.KMap;
import org.deidentifier.arx.criteria.PrivacyCriterion;
import org.deidentifier.arx.framework.check.groupify.HashGroupifyEntry;
import org.deidentifier.arx.framework.lattice.Transformation;

public class ArxLinkage {

    // ------------------------------------------------------------------ command line

    final Map<String, List<String>> OPTIONS = new HashMap<>();

    static void fail(String message) {
        System.err.println("ArxLinkage: " + message);
        System.exit(2);
    }

    String option(String name, String fallback) {
        List<String> values = OPTIONS.get(name);
        return values == null ? fallback : values.get(values.size() - 1);
    }

    static List<String> split(String text) {
        List<String> parts = new ArrayList<>();
        if (text == null) return parts;
        for (String part : text.split(",")) {
            if (!part.trim().isEmpty()) parts.add(part.trim());
        }
        return parts;
    }

    void parse(List<String> args) {
        for (int i = 0; i < args.size(); i++) {
            if (!args.get(i).startsWith("--")) fail("unexpected argument " + args.get(i));
            String name = args.get(i).substring(2);
            String value = "true";
            if (!name.equals("classes")) {
                if (i + 1 >= args.size()) fail("--" + name + " needs a value");
                value = args.get(++i);
            }
            OPTIONS.computeIfAbsent(name, x -> new ArrayList<>()).add(value);
        }
    }

    // ------------------------------------------------------------------ JSON

    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static String json(Object value) {
        if (value == null) return "null";
        if (value instanceof String) return quote((String) value);
        if (value instanceof Double) {
            double d = (Double) value;
            // repr-exact: Double.toString round-trips, and Python's float() reads it back
            return Double.isFinite(d) ? Double.toString(d) : "null";
        }
        if (value instanceof Number || value instanceof Boolean) return value.toString();
        StringBuilder out = new StringBuilder();
        if (value instanceof Map) {
            out.append('{');
            String sep = "";
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                out.append(sep).append(quote(e.getKey().toString())).append(": ").append(json(e.getValue()));
                sep = ", ";
            }
            return out.append('}').toString();
        }
        if (value instanceof List) {
            out.append('[');
            String sep = "";
            for (Object item : (List<?>) value) {
                out.append(sep).append(json(item));
                sep = ", ";
            }
            return out.append(']').toString();
        }
        return quote(value.toString());
    }

    // ------------------------------------------------------------------ input

    /** A CSV read into memory, header first; only the QI columns are kept. */
    static List<String[]> readQiColumns(String path, char sep, List<String> qis) throws IOException {
        // ARX's own CSV reader, then a projection on the QIs
        Data data = Data.create(new File(path), StandardCharsets.UTF_8, sep);
        DataHandle handle = data.getHandle();
        int[] columns = new int[qis.size()];
        for (int j = 0; j < qis.size(); j++) {
            columns[j] = handle.getColumnIndexOf(qis.get(j));
            if (columns[j] < 0) fail(path + " has no column " + qis.get(j));
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(qis.toArray(new String[0]));
        for (int i = 0; i < handle.getNumRows(); i++) {
            String[] row = new String[columns.length];
            for (int j = 0; j < columns.length; j++) row[j] = handle.getValue(i, columns[j]);
            rows.add(row);
        }
        return rows;
    }

    static String[][] readHierarchy(String path, char sep) throws IOException {
        return Hierarchy.create(new File(path), StandardCharsets.UTF_8, sep).getHierarchy();
    }

    /** The identity hierarchy (one level) of a column's distinct values. */
    static String[][] identity(List<String[]> rows, int column) {
        Set<String> values = new LinkedHashSet<>();
        for (int i = 1; i < rows.size(); i++) values.add(rows.get(i)[column]);
        String[][] hierarchy = new String[values.size()][];
        int i = 0;
        for (String v : values) hierarchy[i++] = new String[] { v };
        return hierarchy;
    }

    // ------------------------------------------------------------------ ARX runs

    List<String[]> population;
    List<String> qis;
    final Map<String, String[][]> hierarchies = new LinkedHashMap<>();
    final Map<String, Integer> levels = new LinkedHashMap<>();
    int[] subsetRows;

    /** A fresh ARX Data object for one run: QIs with their hierarchies, pinned to the levels. */
    Data data() {
        Data data = Data.create(population);
        for (String qi : qis) {
            data.getDefinition().setAttributeType(qi, Hierarchy.create(hierarchies.get(qi)));
            data.getDefinition().setMinimumGeneralization(qi, levels.get(qi));
            data.getDefinition().setMaximumGeneralization(qi, levels.get(qi));
        }
        return data;
    }

    DataSubset subset() {
        Set<Integer> rows = new LinkedHashSet<>();
        for (int r : subsetRows) rows.add(r);
        return DataSubset.create(population.size() - 1, rows);
    }

    static final class Run {
        ARXResult result;
        ARXLattice.ARXNode node;
        boolean holds;
    }

    Run run(PrivacyCriterion model, double suppressionLimit) throws IOException {
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(model);
        config.setSuppressionLimit(suppressionLimit);
        Run run = new Run();
        run.result = new ARXAnonymizer().anonymize(data(), config);
        ARXLattice lattice = run.result.getLattice();
        if (lattice.getSize() != 1) throw new IllegalStateException("lattice of " + lattice.getSize() + " nodes");
        run.node = lattice.getBottom();
        ARXLattice.Anonymity anonymity = run.node.getAnonymity();
        run.holds = anonymity == ARXLattice.Anonymity.ANONYMOUS;
        if (run.holds != (run.result.getGlobalOptimum() != null)) {
            throw new IllegalStateException("node " + anonymity + " but optimum " + run.result.getGlobalOptimum());
        }
        if (anonymity != ARXLattice.Anonymity.ANONYMOUS && anonymity != ARXLattice.Anonymity.NOT_ANONYMOUS) {
            throw new IllegalStateException("the node was not decided: " + anonymity);
        }
        return run;
    }

    /** KMap(1, subset) recording ARX's class counts; it never changes a verdict (pcount >= 1). */
    static final class ClassRecorder extends KMap {
        private static final long serialVersionUID = 1L;
        final Map<Integer, int[]> classes = new TreeMap<>(); // representative row -> {count, pcount}

        ClassRecorder(DataSubset subset) {
            super(1, subset);
        }

        @Override
        public ClassRecorder clone() {
            return this; // ARX clones its configuration; the recorder must stay the one read
        }

        @Override
        public boolean isAnonymous(Transformation<?> node, HashGroupifyEntry entry) {
            classes.put(entry.representative, new int[] { entry.count, entry.pcount });
            return super.isAnonymous(node, entry);
        }
    }

    // ------------------------------------------------------------------ main

    public static void main(String[] args) throws Exception {
        // Several cases in one run (one JVM start): their options separated by --and
        List<String> group = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals("--and")) {
                new ArxLinkage().evaluate(group);
                group = new ArrayList<>();
            } else {
                group.add(arg);
            }
        }
        new ArxLinkage().evaluate(group);
    }

    /** Evaluates one case and prints its JSON object on a line of its own. */
    void evaluate(List<String> args) throws Exception {
        parse(args);
        String populationFile = option("population", null);
        if (populationFile == null || option("qi", null) == null) {
            fail("usage: --population FILE (--release FILE | --rows LIST|@FILE) --qi A,B "
                 + "[--sep ;] [--hierarchy A=FILE]... [--levels A=1] [--k 2,5] [--delta 0:1] [--classes]");
        }
        String sepText = option("sep", ",");
        char sep = sepText.equals("\\t") ? '\t' : sepText.charAt(0);
        qis = split(option("qi", null));
        population = readQiColumns(populationFile, sep, qis);

        for (String assignment : OPTIONS.getOrDefault("hierarchy", List.of())) {
            String[] parts = assignment.split("=", 2);
            if (parts.length != 2 || !qis.contains(parts[0])) fail("bad --hierarchy " + assignment);
            hierarchies.put(parts[0], readHierarchy(parts[1], sep));
        }
        for (int j = 0; j < qis.size(); j++) {
            hierarchies.putIfAbsent(qis.get(j), identity(population, j));
            levels.put(qis.get(j), 0);
        }
        for (String assignment : split(option("levels", ""))) {
            String[] parts = assignment.split("=", 2);
            if (parts.length != 2 || !qis.contains(parts[0])) fail("bad --levels " + assignment);
            levels.put(parts[0], Integer.parseInt(parts[1]));
        }

        // The research subset, as ARX defines it
        String release = option("release", null);
        String rows = option("rows", null);
        if ((release == null) == (rows == null)) fail("give one of --release and --rows");
        if (release != null) {
            DataSubset matched = DataSubset.create(Data.create(population), Data.create(readQiColumns(release, sep, qis)));
            subsetRows = matched.getArray();
        } else {
            List<String> items = rows.startsWith("@")
                ? Files.readAllLines(new File(rows.substring(1)).toPath(), StandardCharsets.UTF_8)
                : split(rows);
            List<Integer> indices = new ArrayList<>();
            for (String item : items) if (!item.trim().isEmpty()) indices.add(Integer.parseInt(item.trim()));
            subsetRows = indices.stream().mapToInt(Integer::intValue).toArray();
            if (new LinkedHashSet<>(indices).size() != indices.size()) fail("--rows repeats a row");
        }

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tool", "ARX (org.deidentifier.arx)");
        out.put("population_rows", population.size() - 1);
        out.put("subset_rows", subsetRows.length);
        out.put("quasi_identifiers", new ArrayList<>(qis));
        out.put("levels", levels);

        List<Object> kmap = new ArrayList<>();
        for (String k : split(option("k", ""))) {
            int kk = Integer.parseInt(k);
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("k", kk);
            item.put("holds", run(new KMap(kk, subset()), 0d).holds);
            // At a suppression limit of 1 ARX suppresses the released records of failing classes
            Run all = run(new KMap(kk, subset()), 1d);
            DataHandle view = all.result.getOutput(all.node, false).getView();
            item.put("records_failing", view.getStatistics().getEquivalenceClassStatistics().getNumberOfSuppressedRecords());
            kmap.add(item);
        }
        out.put("k_map", kmap);

        List<Object> presence = new ArrayList<>();
        for (String pair : split(option("delta", ""))) {
            String[] bounds = pair.split(":");
            double dMin = Double.parseDouble(bounds[0]);
            double dMax = Double.parseDouble(bounds[1]);
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("dmin", dMin);
            item.put("dmax", dMax);
            item.put("holds", run(new DPresence(dMin, dMax, subset()), 0d).holds);
            presence.add(item);
        }
        out.put("delta_presence", presence);

        if (OPTIONS.containsKey("classes")) {
            ClassRecorder recorder = new ClassRecorder(subset());
            run(recorder, 0d);
            List<Object> list = new ArrayList<>();
            int minimum = Integer.MAX_VALUE;
            double lowest = Double.POSITIVE_INFINITY;
            double highest = Double.NEGATIVE_INFINITY;
            for (Map.Entry<Integer, int[]> e : recorder.classes.entrySet()) {
                int count = e.getValue()[0];
                int pcount = e.getValue()[1];
                String[] raw = population.get(e.getKey() + 1);
                List<String> key = new ArrayList<>();
                for (int j = 0; j < qis.size(); j++) key.add(generalize(qis.get(j), raw[j]));
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("key", key);
                item.put("released", count);
                item.put("population", pcount);
                list.add(item);
                if (count > 0) minimum = Math.min(minimum, pcount);
                double share = (double) count / (double) pcount;
                lowest = Math.min(lowest, share);
                highest = Math.max(highest, share);
            }
            Map<String, Object> classes = new LinkedHashMap<>();
            classes.put("count", list.size());
            classes.put("min_population_of_released", minimum == Integer.MAX_VALUE ? null : minimum);
            classes.put("delta_min", lowest);
            classes.put("delta_max", highest);
            classes.put("list", list);
            out.put("classes", classes);
        }
        System.out.println(json(out));
    }

    final Map<String, Map<String, String>> LOOKUP = new HashMap<>();

    /** A value's ancestor at the QI's level, as the hierarchy gives it (for naming classes). */
    String generalize(String qi, String value) {
        Map<String, String> lookup = LOOKUP.computeIfAbsent(qi, q -> {
            Map<String, String> m = new HashMap<>();
            int level = levels.get(q);
            for (String[] row : hierarchies.get(q)) m.put(row[0], row[level]);
            return m;
        });
        return lookup.get(value);
    }
}
