// The stylesheet is imported for its effect (ui/build.ts bundles it); it exports nothing.
declare module '*.css';
