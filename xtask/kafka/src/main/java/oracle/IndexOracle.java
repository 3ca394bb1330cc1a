package oracle;

/** K3 placeholder replaced below. */
final class IndexOracle {
    private IndexOracle() {}

    static void run(String[] a) throws Exception {
        throw new UnsupportedOperationException("k3");
    }
}
