// JRip, J48 and OneR -B 6 (Weka's defaults) on many train/test splits in one JVM; one JSON
// line per split and classifier. Compiled and run by bench/wide.py against Weka's jar:
//     java -cp weka.jar:DIR WideWeka MANIFEST     (MANIFEST: lines "id<TAB>train.arff<TAB>test.arff")
import java.io.BufferedReader;
import java.io.FileReader;
import weka.classifiers.Classifier;
import weka.classifiers.Evaluation;
import weka.classifiers.rules.JRip;
import weka.classifiers.rules.OneR;
import weka.classifiers.trees.J48;
import weka.core.Instances;

public class WideWeka {
    static Instances read(String path) throws Exception {
        try (BufferedReader reader = new BufferedReader(new FileReader(path))) {
            Instances data = new Instances(reader);
            data.setClassIndex(data.numAttributes() - 1);
            return data;
        }
    }

    static int size(String tool, Classifier model) {
        if (model instanceof JRip) return ((JRip) model).getRuleset().size() - 1;  // without the default rule
        if (model instanceof J48) return (int) ((J48) model).measureNumLeaves();
        int branches = 0;  // OneR: one "value -> class" line per branch of its one attribute
        for (String line : model.toString().split("\n")) if (line.contains("->")) branches++;
        return branches;
    }

    public static void main(String[] args) throws Exception {
        try (BufferedReader manifest = new BufferedReader(new FileReader(args[0]))) {
            String line;
            while ((line = manifest.readLine()) != null) {
                String[] parts = line.split("\t");
                Instances train = read(parts[1]), test = read(parts[2]);
                // a nominal attribute with no values (every row missing in a sample) breaks
                // JRip; rulecli skips such columns, and so does this
                for (int i = train.numAttributes() - 2; i >= 0; i--) {
                    if (train.attribute(i).isNominal() && train.attribute(i).numValues() == 0) {
                        train.deleteAttributeAt(i);
                        test.deleteAttributeAt(i);
                    }
                }
                for (String tool : new String[] {"jrip", "j48", "weka-oner"}) {
                    Classifier model = tool.equals("jrip") ? new JRip() : tool.equals("j48") ? new J48() : new OneR();
                    if (model instanceof OneR) ((OneR) model).setMinBucketSize(6);
                    Evaluation evaluation = new Evaluation(train);
                    double seconds;
                    try {
                        long started = System.nanoTime();
                        model.buildClassifier(train);
                        seconds = (System.nanoTime() - started) / 1e9;
                        evaluation.evaluateModel(model, test);
                    } catch (Exception e) {  // one failure is a result of its own, not the end of the run
                        System.out.printf("{\"id\": \"%s\", \"tool\": \"%s\", \"accuracy\": null}%n", parts[0], tool);
                        continue;
                    }
                    System.out.printf(
                        "{\"id\": \"%s\", \"tool\": \"%s\", \"accuracy\": %.17g, \"rules\": %d, \"fit_seconds\": %.6f}%n",
                        parts[0], tool, evaluation.pctCorrect() / 100.0, size(tool, model), seconds);
                }
            }
        }
    }
}
