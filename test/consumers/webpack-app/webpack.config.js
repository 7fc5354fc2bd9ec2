// A plain webpack 5 setup: nothing here is about the worker (webpack follows `new Worker(new URL(...))` by itself).
import HtmlWebpackPlugin from 'html-webpack-plugin';

export default {
  mode: 'production',
  entry: './src/main.js',
  devtool: 'source-map',
  output: { clean: true },
  plugins: [new HtmlWebpackPlugin({ template: './index.html' })],
};
