// Stylesheets are imported for esbuild, which bundles them into console.css.
declare module '*.css';
